package operation

import (
	"errors"
	"fmt"
	"strings"
)

// standInMark starts the stand-in of a secret the broker does not hold.
const standInMark = "blacksmith-secret-not-held-"

// ErrSecretsNotHeld is an operation refused because the manifest to deploy
// would need secrets the broker does not hold: the instance runs without
// any stored in Vault (its credentials are configuration-server variables,
// or Vault lost them), and the plan's template puts one where what runs has
// no variable to keep. Nothing is generated over what runs.
var ErrSecretsNotHeld = errors.New("the broker holds no secrets of this instance, and its plan's template needs them " +
	"where the running manifest has no configuration-server variable to keep")

// StandIns are the secrets to render a manifest with for an instance that
// runs without stored secrets: each value marks a secret not held, which
// KeepVariables replaces by the running manifest's variable and CheckHeld
// finds where it could not.
func StandIns(keys ...string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = standInMark + k
	}
	return out
}

// CheckHeld refuses a manifest that still holds a stand-in (StandIns):
// ErrSecretsNotHeld, naming how many places.
func CheckHeld(manifest string) error {
	if n := strings.Count(manifest, standInMark); n > 0 {
		return fmt.Errorf("%w (%d place(s))", ErrSecretsNotHeld, n)
	}
	return nil
}
