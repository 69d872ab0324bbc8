//go:build !race

package vault_test

// raceEnabled is true when the race detector (5-10x slower) is on.
const raceEnabled = false
