package basicauth_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestBasicAuth(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "BasicAuth Suite")
}
