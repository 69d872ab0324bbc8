package vault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/vault/api"
)

var (
	// ErrCorrupt marks a document or record that cannot be decoded. It is
	// reported with its path and left untouched.
	ErrCorrupt = errors.New("corrupt data")
	// ErrSealed means Vault answered that it is sealed.
	ErrSealed = errors.New("vault is sealed")
	// ErrUnreachable means Vault could not be reached (connection, DNS, TLS).
	ErrUnreachable = errors.New("vault unreachable")
	// ErrDenied means Vault refused the token for the request (HTTP 403).
	ErrDenied = errors.New("permission denied by vault")
	// ErrConflict means a check-and-set write kept losing to other writers.
	ErrConflict = errors.New("check-and-set conflict")
	// ErrNotFound means the instance or backup asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNotMigrated means a legacy Blacksmith index exists at {mount}/db but
	// the sharded layout does not: call Migrate first.
	ErrNotMigrated = errors.New("legacy index not migrated")
	// ErrUnsupportedLayout means the index layout was written by a newer
	// version of this package.
	ErrUnsupportedLayout = errors.New("unsupported index layout version")
	// ErrInvalid marks an invalid argument (instance id, path, option).
	ErrInvalid = errors.New("invalid argument")
	// ErrTooLarge means a value exceeds a size bound (Options.MaxRecordBytes,
	// MaxManifestBytes, MaxSecretBytes) or an instance holds more paths than
	// a backup may hold; nothing was written.
	ErrTooLarge = errors.New("value too large for vault")
)

// RecordError reports one index record that could not be fully decoded.
// It matches ErrCorrupt with errors.Is.
type RecordError struct {
	// Path is the index document holding the record, including the mount.
	Path string
	// ID is the instance id of the record.
	ID string
	// Field is the field with an unexpected type, "" when the whole record is bad.
	Field string
	// Err describes the problem.
	Err error
}

// Error implements error.
func (e *RecordError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("record %q in %s: field %q kept as is: %v", e.ID, e.Path, e.Field, e.Err)
	}
	return fmt.Sprintf("record %q in %s: %v", e.ID, e.Path, e.Err)
}

// Unwrap lets errors.Is(err, ErrCorrupt) match.
func (e *RecordError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// classify wraps a Vault client error with the sentinel that says what kind
// of failure it is. It asks Vault for its seal status on a 503.
func (k *kv) classify(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	var re *api.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	switch re.StatusCode {
	case http.StatusServiceUnavailable:
		if st, serr := k.client.Sys().SealStatusWithContext(ctx); serr == nil && st.Sealed {
			return fmt.Errorf("%w: %w", ErrSealed, err)
		}
	case http.StatusForbidden:
		return fmt.Errorf("%w: %w", ErrDenied, err)
	}
	return err
}

// sortErrors sorts errs by message, so that reports read the same each time.
func sortErrors(errs []error) {
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
}
