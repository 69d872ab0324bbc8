package uaa_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/uaa"
)

// One fetch serves every caller that comes while it runs, and the token is
// held until it is due for renewal.
func TestOneFetchForEveryCaller(t *testing.T) {
	var fetches atomic.Int32
	release := make(chan struct{})
	src := uaa.NewSource(func(context.Context) (uaa.Answer, time.Time, error) {
		fetches.Add(1)
		<-release
		return uaa.Answer{AccessToken: "t1", ExpiresIn: 3600}, time.Now(), nil
	}, "test", nil, nil)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			tok, err := src.Token(context.Background())
			if err != nil || tok.Value != "t1" || tok.Kind != "bearer" {
				t.Errorf("token %+v, %v", tok, err)
			}
		})
	}
	close(release)
	wg.Wait()
	if _, err := src.Token(context.Background()); err != nil || fetches.Load() != 1 {
		t.Fatalf("%d fetches, %v", fetches.Load(), err)
	}
}

// A renewal that fails leaves the held token in use until it expires; a
// token dropped (its server refused it) is fetched again.
func TestRenewalFailureAndDrop(t *testing.T) {
	answers := []error{nil, errors.New("uaa down"), nil}
	var n int
	src := uaa.NewSource(func(context.Context) (uaa.Answer, time.Time, error) {
		err := answers[min(n, len(answers)-1)]
		n++
		if err != nil {
			return uaa.Answer{}, time.Now(), err
		}
		// A 5 s token is renewed at 4 s: fetched "4 s ago", it is due now and expires in 1 s.
		return uaa.Answer{AccessToken: "t" + string(rune('0'+n)), ExpiresIn: 5}, time.Now().Add(-4 * time.Second), nil
	}, "test", nil, nil)
	first, err := src.Token(context.Background())
	if err != nil || first.Value != "t1" {
		t.Fatalf("first: %+v, %v", first, err)
	}
	kept, err := src.Token(context.Background())
	if err != nil || kept.Value != "t1" {
		t.Fatalf("a failed renewal did not keep the held token: %+v, %v", kept, err)
	}
	src.Drop("t1")
	fresh, err := src.Token(context.Background())
	if err != nil || fresh.Value != "t3" {
		t.Fatalf("a dropped token was not fetched again: %+v, %v", fresh, err)
	}
}

func TestParse(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"access_token":"abc","token_type":"bearer","expires_in":600}`: true,
		`{"access_token":"abc"}`:                        true,
		`{"access_token":"a b"}`:                        false,
		`{"access_token":"é"}`:                          false,
		`{"access_token":"abc","token_type":"be arer"}`: false,
		`{"token_type":"bearer"}`:                       false,
		`<html>`:                                        false,
	} {
		if _, err := uaa.Parse([]byte(body), nil); (err == nil) != ok {
			t.Errorf("Parse(%s): %v, want ok %v", body, err, ok)
		}
	}
	start := time.Unix(1_000_000, 0)
	for _, c := range []struct {
		in          int64
		renew, life time.Duration
	}{{5, 4 * time.Second, 5 * time.Second}, {3600, 3570 * time.Second, time.Hour}, {0, 48 * time.Second, time.Minute}, {-1, 48 * time.Second, time.Minute}} {
		renew, expires := uaa.Times(start, c.in)
		if renew.Sub(start) != c.renew || expires.Sub(start) != c.life {
			t.Errorf("Times(%d) = %v, %v", c.in, renew.Sub(start), expires.Sub(start))
		}
	}
}
