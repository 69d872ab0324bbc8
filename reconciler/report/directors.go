package report

// Feed modes, as the summary reports them.
const (
	// FeedWatch: the feed reached the last event read; unchanged deployments are trusted.
	FeedWatch = "watch"
	// FeedResync: every deployment is fetched (a forced run, resync_period
	// elapsed, the first run, a gap in the feed).
	FeedResync = "resync"
	// FeedFallback: the feed could not be read: cache_ttl decides, and the
	// next run reads the feed from the same place.
	FeedFallback = "fallback"
)

// FeedReport says how a run used the Director's event feed.
type FeedReport struct {
	// Mode is "watch", "resync" or "fallback".
	Mode string `json:"mode"`
	// Reason says why the run resynced or fell back.
	Reason string `json:"reason,omitempty"`
	// Pages is the number of event pages read.
	Pages int `json:"pages"`
	// Events is the number of events read since the last run.
	Events int `json:"events"`
	// Changed is the number of deployments the events named.
	Changed int `json:"changed"`
	// Trusted is the number of deployments whose records the feed vouched
	// for without a fetch (no cached copy, index record in step).
	Trusted int `json:"trusted"`
	// LastID is the newest event id read (kept for the next run).
	LastID string `json:"last_id,omitempty"`
	// Tasks is the number of the Director's tasks since the last run that
	// change a deployment (GET /tasks: recorded whether events are or not);
	// their deployments are named as the events' are.
	Tasks int `json:"tasks"`
	// NoEvents says the Director records no events (director.events.record_events
	// false, its default): its event log is empty while its tasks change
	// deployments. Its deployments are watched through its tasks; Health
	// Monitor alerts never arrive.
	NoEvents bool `json:"no_events,omitempty"`
}

// DirectorReport is what a run saw of one Director.
type DirectorReport struct {
	// Name is the Director's bosh.name.
	Name string `json:"name"`
	// Listed says whether its deployments could be listed.
	Listed bool `json:"listed"`
	// Deployments is the number of its deployments listed (the reconciler.ignore ones included).
	Deployments int `json:"deployments"`
	// Error says why it could not be listed.
	Error string `json:"error,omitempty"`
	// Feed says how the run used its event feed.
	Feed *FeedReport `json:"feed,omitempty"`
}
