package bosh_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// maxFailures bounds the failures hammer keeps.
const maxFailures = 10

// hammer makes calls of every kind on c from n goroutines for as long as
// more(calls made so far) says, and returns the number of calls and the
// first failures. It expects a deployment named "soak".
func hammer(c *bosh.Client, n int, more func(calls int64) bool) (int64, []error) {
	var (
		calls    atomic.Int64
		mu       sync.Mutex
		failures []error
		wg       sync.WaitGroup
	)
	for w := range n {
		wg.Go(func() {
			defer GinkgoRecover()
			for i := 0; more(calls.Load()); i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := mixedCall(ctx, c, w, i)
				cancel()
				calls.Add(1)
				if err != nil {
					mu.Lock()
					if len(failures) < maxFailures {
						failures = append(failures, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return calls.Load(), failures
}

// mixedCall is the i-th call of worker w: reads mostly, a deploy now and then.
func mixedCall(ctx context.Context, c *bosh.Client, w, i int) error {
	var err error
	switch i % 5 {
	case 0:
		_, err = c.Deployments(ctx)
	case 1:
		_, err = c.Manifest(ctx, "soak")
	case 2:
		_, err = c.Instances(ctx, "soak")
	case 3:
		_, err = c.Tasks(ctx, bosh.TaskQuery{Deployment: "soak", Limit: 5})
	case 4:
		if i%25 != 4 {
			_, err = c.VMs(ctx, "soak")
			break
		}
		var t bosh.Task
		if t, err = c.Deploy(ctx, []byte(manifest(fmt.Sprintf("soak-%d", w)))); err == nil {
			_, err = c.Task(ctx, t.ID)
		}
	}
	return err
}
