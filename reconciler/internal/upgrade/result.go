package upgrade

// busy is an attempt that found the instance's operation in progress:
// tried again later, up to the attempt limit (a state of one instance in a
// fleet upgrade that no report shows: the report.Upgrade* states are the
// others).
const busy = "busy"
