package memory_test

import (
	"context"
	"encoding/json"
)

var ctx = context.Background()

// stateDocs keeps state documents in memory, encoded as Vault keeps them,
// for the tests of the quarantine's own rules (the reconciler's specs use a
// real Vault).
type stateDocs struct{ docs map[string][]byte }

func (s *stateDocs) ReadState(_ context.Context, name string, v any) (bool, error) {
	raw, ok := s.docs[name]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

func (s *stateDocs) WriteState(_ context.Context, name string, v any) error {
	raw, err := json.Marshal(v)
	s.docs[name] = raw
	return err
}
