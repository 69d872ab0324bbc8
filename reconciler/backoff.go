package reconciler

import "time"

// maxBackoff caps the wait between two attempts, whatever Config.RetryDelay says.
const maxBackoff = 5 * time.Minute
