package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// haConfig is writeConfig's configuration with HA on (lease_ttl 3s) and the
// reconciler's interval set (writeConfig's own reconciler section says 1h).
func haConfig(listen string, interval time.Duration) string {
	GinkgoHelper()
	text := fmt.Sprintf(`broker:
  listen: %s
  username: %s
  password: %s
vault:
  address: %s
  token: %s
  mount: secret
bosh:
  address: %s
  username: %s
  password: %s
  timeout: 60s
catalog:
  dirs: [%s]
reconciler:
  interval: %s
  retry_delay: 1s
  stop_timeout: 10s
ha:
  enabled: true
  lease_ttl: 3s
`, listen, brokerUser, brokerPass, vaultServer.Addr, vaultServer.Token, directorURL, simUser, simPass,
		strconv.Quote(catalogDir), interval)
	path := filepath.Join(GinkgoT().TempDir(), "blacksmith.conf")
	Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	return path
}

// startHADaemon is startDaemon with haConfig.
func startHADaemon(interval time.Duration) *daemon {
	GinkgoHelper()
	addr := freeAddr()
	d := &daemon{url: "http://" + addr, config: haConfig(addr, interval)}
	DeferCleanup(d.stop)
	d.start()
	d.waitReady()
	return d
}

var _ = Describe("several broker VMs on one Vault, each with a reconciler interval", func() {
	// 60 s at a 10 s interval, as the issue asks: one listing per interval
	// (5 to 7), never one per daemon and interval (18).
	const interval, window = 10 * time.Second, 60 * time.Second
	const most = int(window/interval) + 1 // a run at each end of the window

	It("the Director sees one listing per interval, not three", func() {
		var ds []*daemon
		for range 3 {
			ds = append(ds, startHADaemon(interval))
		}
		Eventually(func() int { return len(leaders(ds)) }).WithTimeout(20 * time.Second).Should(Equal(1))
		leader := leaders(ds)[0]
		started := make([]int, len(ds))
		for i, d := range ds {
			started[i] = len(runsStarted(d))
		}

		resetSim()
		Consistently(listings).WithTimeout(window).WithPolling(time.Second).Should(BeNumerically("<=", most))
		n := listings()
		GinkgoWriter.Printf("%d listings in %s\n", n, window)
		Expect(n).To(BeNumerically(">=", most-2), "one listing per interval")

		Expect(leaders(ds)).To(ConsistOf(leader), "the same daemon led throughout")
		for i, d := range ds {
			runs := len(runsStarted(d)) - started[i]
			if d == leader {
				Expect(runs).To(BeNumerically("~", window/interval, 1), "the leader runs once per interval")
			} else {
				Expect(runs).To(BeZero(), "a follower runs nothing")
			}
		}
	})
})
