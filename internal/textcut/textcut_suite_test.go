package textcut_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestTextcut(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "textcut")
}
