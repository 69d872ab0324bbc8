package vault

// SetReshardStep makes f run after each step of a re-shard is written, until
// the returned function puts the default back.
func SetReshardStep(f func(step string)) (restore func()) {
	old := reshardStep
	reshardStep = f
	return func() { reshardStep = old }
}
