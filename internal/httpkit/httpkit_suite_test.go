package httpkit_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestHTTPKit(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "httpkit")
}
