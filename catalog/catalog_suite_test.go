package catalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

func TestCatalog(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "catalog")
}

// tree is a catalog directory: relative path -> file content.
type tree map[string]string

// write creates the tree in a fresh directory and returns its path.
func (t tree) write() string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	for name, content := range t {
		path := filepath.Join(dir, name)
		Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
	}
	return dir
}

// with returns a copy of t with the given files replaced (or, for "", removed).
func (t tree) with(changes tree) tree {
	out := tree{}
	for k, v := range t {
		out[k] = v
	}
	for k, v := range changes {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

const manifest = "name: {{ .DeploymentName }}\ninstance_groups: []\n"

// good is a valid catalog of one service with two plans.
var good = tree{
	"redis/service.yml":           "id: redis\nname: redis\ndescription: Redis\ntags: [redis, cache]\nlimit: 20\n",
	"redis/small/plan.yml":        "id: redis-small\nname: small\ndescription: Small\nlimit: 3\nmax_bindings: 4\nbindings: per_binding\nupdatable: true\nmaximum_polling_duration: 3600\npolling_interval: 30\nlifecycle_errands: {post_deploy: [smoke-tests, check.2], pre_delete: [drain-data]}\n",
	"redis/small/manifest.yml":    manifest,
	"redis/small/credentials.yml": "host: {{ index .IPs 0 }}\n",
	"redis/large/plan.yml":        "id: redis-large\nname: large\ndescription: Large\ndirector: west\n",
	"redis/large/manifest.yml":    manifest,
}

// problems returns the lines of a *catalog.Problems error.
func problems(err error) []string {
	GinkgoHelper()
	var p *catalog.Problems
	Expect(errors.As(err, &p)).To(BeTrue(), "want *catalog.Problems, got %T: %v", err, err)
	out := make([]string, len(p.List))
	for i, pr := range p.List {
		out[i] = pr.String()
	}
	return out
}
