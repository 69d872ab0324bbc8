package healthloop

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestHealthloop(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "reconciler/internal/healthloop")
}
