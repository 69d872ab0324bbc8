package manifests_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

// compilePackage does with the blacksmith package what a BOSH compilation VM
// does: the files the spec selects and the packaging script in a compile
// folder, the BOSH_* variables, the dependencies under BOSH_PACKAGES_DIR, then
// `bash packaging`, with a PATH that holds no Go. golang-1-linux is a
// stand-in made of this machine's Go: a bosh/compile.env that sets GOROOT,
// GOPATH and PATH as bosh-package-golang-release's does for its own Go. The
// build cache is this machine's (it saves minutes and cannot stand in for a
// missing source file); the module cache is an empty one.
func compilePackage(srcDir string, files []string) (string, *gexec.Session) {
	GinkgoHelper()
	root := GinkgoT().TempDir()
	compileDir := filepath.Join(root, "compile", "blacksmith")
	install := filepath.Join(root, "data", "packages", "blacksmith")
	for _, f := range append(files, "packaging") {
		from := filepath.Join(srcDir, f)
		if f == "packaging" {
			from = filepath.Join(releaseDir, "packages", "blacksmith", "packaging")
		}
		data, err := os.ReadFile(from)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(filepath.Dir(filepath.Join(compileDir, f)), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(compileDir, f), data, 0o644)).To(Succeed())
	}
	Expect(os.MkdirAll(install, 0o755)).To(Succeed())

	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	Expect(err).NotTo(HaveOccurred())
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	Expect(err).NotTo(HaveOccurred())
	golang := filepath.Join(root, "packages", "golang-1-linux", "bosh")
	Expect(os.MkdirAll(golang, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(golang, "compile.env"), []byte(
		"export GOROOT="+strings.TrimSpace(string(goroot))+"\nexport GOPATH=$PWD\nexport PATH=$GOROOT/bin:$GOPATH/bin:$PATH\n"), 0o644)).To(Succeed())

	cmd := exec.Command("bash", "packaging")
	cmd.Dir = compileDir
	cmd.Env = []string{
		"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(root, "home"),
		"BOSH_COMPILE_TARGET=" + compileDir, "BOSH_INSTALL_TARGET=" + install,
		"BOSH_PACKAGE_NAME=blacksmith", "BOSH_PACKAGE_VERSION=dev",
		"BOSH_PACKAGES_DIR=" + filepath.Join(root, "packages"),
		"GOCACHE=" + strings.TrimSpace(string(gocache)),
	}
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(8 * time.Minute).Should(gexec.Exit())
	return install, session
}

var _ = Describe("ci/release/sync-src.sh and packages/blacksmith", Ordered, func() {
	var release string // a copy of release/, its src/blacksmith filled by the script
	var files []string // what packages/blacksmith selects there

	BeforeAll(func() {
		var err error
		release, err = os.MkdirTemp("", "blacksmith-release-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, release)
		for _, dir := range []string{"config", "jobs", "packages"} {
			Expect(os.CopyFS(filepath.Join(release, dir), os.DirFS(filepath.Join(releaseDir, dir)))).To(Succeed())
		}
		_, err = runScript([]string{"GOPROXY=off", "GOFLAGS="}, syncSrc, filepath.Join(release, "src", "blacksmith"))
		Expect(err).NotTo(HaveOccurred())
		var unmatched []string
		files, unmatched = packageFiles(filepath.Join(release, "src"), releasePackages()["blacksmith"])
		Expect(unmatched).To(BeEmpty(), "package globs that select nothing")
	})

	It("copies the daemon's sources and vendored modules as real files, without tests or hidden files", func() {
		Expect(files).To(ContainElements("blacksmith/go.mod", "blacksmith/go.sum", "blacksmith/VERSION",
			"blacksmith/vendor/modules.txt", "blacksmith/cmd/blacksmith/main.go"))
		Expect(filepath.WalkDir(filepath.Join(release, "src"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			Expect(d.Type()&fs.ModeSymlink).To(BeZero(), "%s is a symbolic link: bosh create-release skips what it reaches through one", p)
			Expect(d.Name()).NotTo(Or(HavePrefix("."), HaveSuffix("_test.go"), Equal("testdata")), p)
			return nil
		})).To(Succeed())
	})

	It("refuses to replace a folder it did not write", func() {
		foreign := GinkgoT().TempDir()
		keep := filepath.Join(foreign, "keep.txt")
		Expect(os.WriteFile(keep, []byte("mine"), 0o644)).To(Succeed())
		_, err := runScript([]string{"GOPROXY=off", "GOFLAGS="}, syncSrc, foreign)
		Expect(err).To(HaveOccurred())
		Expect(keep).To(BeAnExistingFile())
	})

	It("compiles offline, from vendor/ alone, to a blacksmith that runs", func() {
		install, session := compilePackage(filepath.Join(release, "src"), files)
		Expect(session.ExitCode()).To(Equal(0), "packaging failed")
		version, err := os.ReadFile(filepath.Join(release, "src", "blacksmith", "VERSION"))
		Expect(err).NotTo(HaveOccurred())
		out, err := exec.Command(filepath.Join(install, "bin", "blacksmith"), "version").Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(Equal("blacksmith " + string(version)))
	})

	It("fails without vendor/ rather than fetch modules", func() {
		var withoutVendor []string
		for _, f := range files {
			if !strings.HasPrefix(f, "blacksmith/vendor/") {
				withoutVendor = append(withoutVendor, f)
			}
		}
		_, session := compilePackage(filepath.Join(release, "src"), withoutVendor)
		Expect(session.ExitCode()).NotTo(Equal(0))
		Expect(session.Err).To(gbytes.Say("vendor"))
	})
})
