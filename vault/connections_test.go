package vault_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// countingForwarder forwards TCP connections to addr and counts them.
func countingForwarder(addr string) (url string, conns *atomic.Int64) {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(ln.Close)
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return "http://" + ln.Addr().String(), conns
}

var _ = Describe("connections to Vault", func() {
	It("are reused across writes, reads and deletes (a cold run writes tens of thousands of documents)", func() {
		srv := server()
		url, conns := countingForwarder(strings.TrimPrefix(srv.Addr, "http://"))
		store, err := vault.New(context.Background(), vault.Options{Address: url, Token: srv.Token, Mount: newMount(srv, 2)})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		ctx := context.Background()
		before := conns.Load()
		for i := range 50 {
			id := fmt.Sprintf("i-%d", i)
			Expect(store.PutManifest(ctx, id, "name: x\n")).To(Succeed())
			Expect(store.AppendEvent(ctx, id, vault.Event{Kind: "created"})).To(Succeed())
			_, _, err := store.Manifest(ctx, id)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(conns.Load()-before).To(BeNumerically("<=", 2), "150 sequential requests, one connection")
	})
})
