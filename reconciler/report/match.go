package report

// Strategy names the matcher strategy that tied a deployment to an instance.
type Strategy string

// The matcher strategies, in the order they are tried.
const (
	// StrategyName matches a name `{planID}-{instanceID}`.
	StrategyName Strategy = "name"
	// StrategyMetadata matches a manifest's properties.blacksmith.
	StrategyMetadata Strategy = "metadata"
	// StrategyRelease matches a release mapped to a service (Config.Releases).
	StrategyRelease Strategy = "release"
	// StrategyRule matches a configured name pattern (Config.Rules).
	StrategyRule Strategy = "rule"
)

// Match says which service instance a deployment is, and how sure that is.
type Match struct {
	// InstanceID is the service instance's id.
	InstanceID string `json:"instance_id"`
	// ServiceID is the instance's service; empty when no strategy could tell.
	ServiceID string `json:"service_id"`
	// PlanID is the instance's plan; empty when no strategy could tell.
	PlanID string `json:"plan_id"`
	// Strategy is the strategy that matched.
	Strategy Strategy `json:"strategy"`
	// Confidence is how sure the strategy is, from 0 to 1.
	Confidence float64 `json:"confidence"`
	// Rule names the configured rule that matched (StrategyRule only).
	Rule string `json:"rule,omitempty"`
}
