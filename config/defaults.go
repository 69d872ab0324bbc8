package config

import "time"

// Default returns the configuration used for everything neither the file nor
// the environment sets. Required fields are left empty.
func Default() *Config {
	return &Config{
		Broker: BrokerConfig{Listen: "127.0.0.1:3000", MaxBodyBytes: 256 << 10, MaxParametersBytes: 16 << 10,
			MaxParametersDepth: 10, MaxIDLength: 64, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute,
			IdleTimeout: 2 * time.Minute},
		Vault:   VaultConfig{Mount: "secret", MaxRecordBytes: 32 << 10},
		BOSH:    DefaultBOSH(),
		HA:      HAConfig{LeaseTTL: 30 * time.Second},
		CF:      CFConfig{Timeout: 30 * time.Second},
		Metrics: MetricsConfig{Enabled: true},
		Reconciler: ReconcilerConfig{
			Enabled:             true,
			Interval:            time.Hour,
			WatchInterval:       time.Minute,
			MaxConcurrency:      5,
			BatchSize:           10,
			RetryAttempts:       3,
			RetryDelay:          10 * time.Second,
			CacheTTL:            5 * time.Minute,
			ResyncPeriod:        24 * time.Hour,
			HealthSweep:         24 * time.Hour,
			Health:              HealthConfig{TasksAtOnce: 1},
			Backup:              BackupConfig{Enabled: true, Retention: 10, Cleanup: true, Path: "backups"},
			OrphanGracePeriod:   10 * time.Minute,
			StopTimeout:         30 * time.Second,
			BreakerThreshold:    20,
			Quarantine:          QuarantineConfig{Backoff: 15 * time.Minute, MaxBackoff: 24 * time.Hour},
			StuckOperationAfter: time.Hour,
			History:             HistoryConfig{Keep: 200},
			RunLog:              50,
			Remediation: RemediationConfig{Mode: RemediateNone, MinAge: 24 * time.Hour, MaxPerRun: 5,
				OrphanDeployments: OrphanDeploymentsReport, OrphanDeploymentsMaxShare: 0.1, RetirementPeriod: 7 * 24 * time.Hour},
			Upgrades: UpgradesConfig{Mode: UpgradeReport, MaxPerRun: 10, Canaries: 1, MaxInFlight: 5, MaxFailures: 1,
				AttemptLimit: 5, TaskTimeout: 2 * time.Hour},
		},
	}
}

// MaxDirectors bounds the Directors of a bosh list.
const MaxDirectors = 32

// DefaultBOSH is the default of one Director's section (every Director of a
// list starts from it).
func DefaultBOSH() BOSHConfig {
	return BOSHConfig{Name: "default", Timeout: 30 * time.Second, RateBurst: 10, MaxInFlight: 10}
}

// Directors are the configured Directors in order: bosh (the first), then
// MoreDirectors. Plans that name no Director are deployed by the first.
func (c *Config) Directors() []BOSHConfig {
	return append([]BOSHConfig{c.BOSH}, c.MoreDirectors...)
}
