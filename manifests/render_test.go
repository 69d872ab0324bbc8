package manifests_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"gopkg.in/yaml.v3"
)

// renderJob renders every template of the blacksmith job into dir, from the
// job's properties as a deployment manifest gives them, as the Director does
// (ci/release/render-templates.rb). The error holds the renderer's message.
func renderJob(props map[string]any, dir string) error {
	GinkgoHelper()
	return renderJobAt(jobDir, props, dir)
}

// renderJobAt renders the job of the release folder job as renderJob does.
func renderJobAt(job string, props map[string]any, dir string) error {
	GinkgoHelper()
	input, err := json.Marshal(map[string]any{"properties": props})
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(rubyPath(), renderer, job, dir)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// fakeVM is a BOSH VM in a temporary folder: root/var/vcap/jobs/blacksmith
// holds the rendered job, with every /var/vcap/ path its files name moved
// under root, and each folder catalog.dirs names holds part of the sample
// catalog, as a colocated forge job's folder would.
type fakeVM struct {
	root string
}

// newFakeVM renders the job from props onto a new fake VM.
func newFakeVM(props map[string]any) *fakeVM {
	GinkgoHelper()
	vm := &fakeVM{root: GinkgoT().TempDir()}
	job := vm.path("/var/vcap/jobs/blacksmith")
	Expect(renderJob(props, job)).To(Succeed())
	Expect(filepath.WalkDir(job, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		moved := strings.ReplaceAll(string(data), "/var/vcap/", vm.root+"/var/vcap/")
		return os.WriteFile(path, []byte(moved), 0o644) // keeps the file's mode
	})).To(Succeed())
	vm.layOutForges(lookupList(props, "catalog.dirs"))
	return vm
}

// path is p, an absolute path on the VM, in the fake VM's folder.
func (vm *fakeVM) path(p string) string { return filepath.Join(vm.root, p) }

// jobFile is a file of the rendered job, e.g. "config/blacksmith.conf".
func (vm *fakeVM) jobFile(rel string) string { return vm.path("/var/vcap/jobs/blacksmith/" + rel) }

// layOutForges gives catalog folder i the sample catalog's services k with
// k % len(dirs) == i (links to them), so that no service is offered twice.
func (vm *fakeVM) layOutForges(dirs []string) {
	GinkgoHelper()
	entries, err := os.ReadDir(catalogDir)
	Expect(err).NotTo(HaveOccurred())
	var services []string
	for _, e := range entries {
		if e.IsDir() {
			services = append(services, e.Name())
		}
	}
	for i, dir := range dirs {
		Expect(dir).To(HavePrefix("/var/vcap/"), "the fake VM hosts catalog folders under /var/vcap/ only")
		Expect(os.MkdirAll(vm.path(dir), 0o755)).To(Succeed())
		for k, service := range services {
			if k%len(dirs) == i {
				target, err := filepath.Abs(filepath.Join(catalogDir, service))
				Expect(err).NotTo(HaveOccurred())
				Expect(os.Symlink(target, filepath.Join(vm.path(dir), service))).To(Succeed())
			}
		}
	}
}

// run runs a program of the rendered job with bash and waits for it.
func (vm *fakeVM) run(script string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command("bash", append([]string{vm.jobFile(script)}, args...)...)
	cmd.Env = cleanEnv()
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(time.Minute).Should(gexec.Exit())
	return session
}

// checkConfig runs `blacksmith check-config` on the rendered blacksmith.conf
// and waits for it.
func (vm *fakeVM) checkConfig() *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(blacksmithBin, "check-config", "-c", vm.jobFile("config/blacksmith.conf"))
	cmd.Env = cleanEnv()
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(time.Minute).Should(gexec.Exit())
	return session
}

// deploy runs bin/pre-start and check-config as a deploy would start the
// job, and returns the effective configuration check-config prints.
func (vm *fakeVM) deploy() map[string]any {
	GinkgoHelper()
	preStart := vm.run("bin/pre-start")
	Expect(preStart.ExitCode()).To(Equal(0), "bin/pre-start: %s", preStart.Err.Contents())
	check := vm.checkConfig()
	Expect(check.ExitCode()).To(Equal(0), "check-config: %s", check.Err.Contents())
	var effective map[string]any
	Expect(yaml.Unmarshal(check.Out.Contents(), &effective)).To(Succeed())
	return effective
}

// lookup finds a dotted key in a tree of maps.
func lookup(tree map[string]any, dotted string) (any, bool) {
	var node any = tree
	for part := range strings.SplitSeq(dotted, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		if node, ok = m[part]; !ok {
			return nil, false
		}
	}
	return node, true
}

// lookupList is the list of strings at a dotted key, or nil.
func lookupList(tree map[string]any, dotted string) []string {
	v, _ := lookup(tree, dotted)
	if list, ok := v.([]string); ok {
		return list
	}
	var out []string
	items, _ := v.([]any)
	for _, item := range items {
		out = append(out, fmt.Sprint(item))
	}
	return slices.Clip(out)
}
