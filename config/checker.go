package config

import (
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"
)

// checker records validation problems, pointing each at the file line or the
// environment variable the offending value came from.
type checker struct {
	problems *Problems
	src      sources
}

func (ck checker) fail(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if v := ck.src.env[key]; v != "" {
		msg += " (set by " + v + ")"
	}
	ck.problems.add(key, ck.src.line[key], "%s", msg)
}

// envName returns the variable that sets key, or "".
func envName(key string) string {
	for _, ev := range envVars {
		if ev.Key == key {
			return ev.Name
		}
	}
	return ""
}

func (ck checker) required(key, value string) {
	if value != "" {
		return
	}
	if v := envName(key); v != "" {
		ck.fail(key, "required (set it in the file or with %s)", v)
		return
	}
	ck.fail(key, "required")
}

// requiredWhen reports an empty value that other, being set, makes required.
func (ck checker) requiredWhen(key, value, other string) {
	if value == "" {
		ck.fail(key, "required when %s is set (set it in the file or with %s)", other, envName(key))
	}
}

// pair reports a value given without its partner, e.g. a username without a password.
func (ck checker) pair(keyA, a, keyB, b string) {
	if a != "" && b == "" {
		ck.fail(keyB, "required when %s is set", keyA)
	}
	if b != "" && a == "" {
		ck.fail(keyA, "required when %s is set", keyB)
	}
}

func (ck checker) atLeast(key string, n, least int) {
	if n < least {
		ck.fail(key, "must be at least %d, got %d", least, n)
	}
}

func (ck checker) between(key string, n, least, most int) {
	if n < least || n > most {
		ck.fail(key, "must be between %d and %d, got %d", least, most, n)
	}
}

func (ck checker) positive(key string, d time.Duration) {
	if d <= 0 {
		ck.fail(key, "must be a positive duration, got %s", d)
	}
}

func (ck checker) notNegative(key string, d time.Duration) {
	if d < 0 {
		ck.fail(key, "must not be negative, got %s", d)
	}
}

// caCert checks that value (a path, or inline PEM when inline is allowed)
// holds at least one PEM certificate.
func (ck checker) caCert(key, value string, inline bool) {
	if value == "" {
		return
	}
	data := []byte(value)
	if !inline || !isInlinePEM(value) {
		var err error
		if data, err = os.ReadFile(value); err != nil {
			ck.fail(key, "cannot read: %v", err)
			return
		}
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		ck.fail(key, "no PEM certificate found")
	}
}

func isInlinePEM(s string) bool { return strings.Contains(s, "-----BEGIN") }
