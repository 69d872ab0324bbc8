package cf

// Admin is the Cloud Controller's writes an operator's errand makes
// (brokers, plan visibility, instance deletes) through a Client: its
// token, bounds and metrics. The client's own credentials must be allowed
// to make them (cloud_controller.admin); the daemon's, which only reads,
// are not.
type Admin struct{ c *Client }

// NewAdmin is the writes of c.
func NewAdmin(c *Client) *Admin { return &Admin{c: c} }
