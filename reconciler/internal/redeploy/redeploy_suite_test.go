package redeploy_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRedeploy(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "reconciler/internal/redeploy")
}
