package manifests_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"
)

// bpmConfig is bpm's job configuration (config/bpm.yml) with every key bpm
// 1.x reads (bpm-release's docs/config.md and src/bpm/config/job_config.go).
type bpmConfig struct {
	Processes []bpmProcess `yaml:"processes"`
}

type bpmProcess struct {
	Name              string            `yaml:"name"`
	Executable        string            `yaml:"executable"`
	Args              []string          `yaml:"args"`
	Env               map[string]string `yaml:"env"`
	Workdir           string            `yaml:"workdir"`
	Hooks             *bpmHooks         `yaml:"hooks"`
	Capabilities      []string          `yaml:"capabilities"`
	Limits            *bpmLimits        `yaml:"limits"`
	EphemeralDisk     bool              `yaml:"ephemeral_disk"`
	PersistentDisk    bool              `yaml:"persistent_disk"`
	AdditionalVolumes []bpmVolume       `yaml:"additional_volumes"`
	Unsafe            *bpmUnsafe        `yaml:"unsafe"`
	ShutdownSignal    string            `yaml:"shutdown_signal"` // bpm >= 1.1.14
}

type bpmHooks struct {
	PreStart string `yaml:"pre_start"`
}

type bpmLimits struct {
	Memory    *string `yaml:"memory"`
	OpenFiles *uint64 `yaml:"open_files"`
	Processes *int64  `yaml:"processes"`
}

type bpmVolume struct {
	Path            string `yaml:"path"`
	Writable        bool   `yaml:"writable"`
	AllowExecutions bool   `yaml:"allow_executions"`
	MountOnly       bool   `yaml:"mount_only"`
}

type bpmUnsafe struct {
	Privileged          bool        `yaml:"privileged"`
	UnrestrictedVolumes []bpmVolume `yaml:"unrestricted_volumes"`
}

// bpmVolumeRoots are where bpm lets additional_volumes be.
var bpmVolumeRoots = []string{"/var/vcap/data/", "/var/vcap/store/", "/var/vcap/sys/run/"}

// checkBPM checks the bpm.yml of job: strictly by the schema above (bpm
// itself ignores an unknown key, such as shutdown_timeout, silently), then by
// bpm's own rules for names, executables, volumes, limits and signals.
func checkBPM(text []byte, job string) error {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	var cfg bpmConfig
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("not a bpm configuration: %w", err)
	}
	if len(cfg.Processes) == 0 {
		return errors.New("no processes")
	}
	seen := map[string]bool{}
	for _, p := range cfg.Processes {
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("process name %q is empty or used twice", p.Name)
		}
		seen[p.Name] = true
		if !filepath.IsAbs(p.Executable) {
			return fmt.Errorf("process %s: executable %q is not an absolute path", p.Name, p.Executable)
		}
		for _, v := range p.AdditionalVolumes {
			if err := checkBPMVolume(v.Path, job); err != nil {
				return fmt.Errorf("process %s: %w", p.Name, err)
			}
		}
		if p.Limits != nil && p.Limits.Memory != nil && !memoryLimit.MatchString(*p.Limits.Memory) {
			return fmt.Errorf("process %s: memory limit %q is not a size such as 512M", p.Name, *p.Limits.Memory)
		}
		if p.ShutdownSignal != "" && p.ShutdownSignal != "TERM" && p.ShutdownSignal != "INT" {
			return fmt.Errorf("process %s: shutdown_signal %q is neither TERM nor INT", p.Name, p.ShutdownSignal)
		}
	}
	return nil
}

var memoryLimit = regexp.MustCompile(`^[0-9]+[KMGT]?B?$`)

// checkBPMVolume applies bpm's rules for an additional volume: a canonical
// path under one of bpmVolumeRoots, not one of the job's own folders there.
func checkBPMVolume(path, job string) error {
	if filepath.Clean(path) != path {
		return fmt.Errorf("volume path %s is not canonical", path)
	}
	for _, own := range []string{"/var/vcap/data/" + job, "/var/vcap/store/" + job} {
		if path == own {
			return fmt.Errorf("volume path %s is the job's own folder, which bpm mounts anyway", path)
		}
	}
	for _, root := range bpmVolumeRoots {
		if strings.HasPrefix(path, root) {
			return nil
		}
	}
	return fmt.Errorf("volume path %s is outside %s", path, strings.Join(bpmVolumeRoots, ", "))
}

var _ = DescribeTable("checkBPM, the bpm.yml check",
	func(text, problem string) {
		err := checkBPM([]byte(text), "blacksmith")
		if problem == "" {
			Expect(err).NotTo(HaveOccurred())
			return
		}
		Expect(err).To(MatchError(ContainSubstring(problem)))
	},
	Entry("accepts a process with a shared volume and a signal",
		"processes: [{name: b, executable: /var/vcap/packages/b/bin/b, shutdown_signal: INT, "+
			"additional_volumes: [{path: /var/vcap/data/shared, writable: true}], limits: {memory: 512M, open_files: 1024}}]", ""),
	Entry("refuses shutdown_timeout, which bpm does not know",
		"processes: [{name: b, executable: /x, shutdown_timeout: 60s}]", "shutdown_timeout"),
	Entry("refuses a volume in another job's folder",
		"processes: [{name: b, executable: /x, additional_volumes: [{path: /var/vcap/jobs/forge/catalog}]}]", "outside"),
	Entry("refuses a volume path that is not canonical",
		"processes: [{name: b, executable: /x, additional_volumes: [{path: /var/vcap/data/a/../b}]}]", "canonical"),
	Entry("refuses the job's own data folder as a volume",
		"processes: [{name: b, executable: /x, additional_volumes: [{path: /var/vcap/data/blacksmith}]}]", "own folder"),
	Entry("refuses a process without executable", "processes: [{name: b}]", "executable"),
	Entry("refuses a signal bpm does not send", "processes: [{name: b, executable: /x, shutdown_signal: KILL}]", "shutdown_signal"),
	Entry("refuses args that are not a list", "processes: [{name: b, executable: /x, args: serve}]", "not a bpm configuration"),
)
