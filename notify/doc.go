// Package notify sends the reconciler's events (an instance orphaned, a
// drift found, a run failed...) to webhooks, without ever holding up the
// reconciler.
//
// Notify only queues: each webhook has its own bounded queue (over it the
// oldest event is dropped, counted and logged) and its own worker, started
// by Run, that posts the events in order, one at a time, so that a slow or
// dead receiver delays no other. A delivery is retried with the project's
// backoff (package retry) until it succeeds, the receiver refuses it for
// good (a 3xx, or a 4xx other than 408 and 429) or the attempts run out.
//
// Delivery is at least once, within the life of the process: a receiver
// may get an event twice (its answer lost, say) and de-duplicates with the
// event's id; what is still queued when Run ends is dropped, logged and
// counted, not persisted.
//
// Each request is a POST of the event's JSON, signed with the webhook's
// secret:
//
//	Content-Type: application/json
//	User-Agent: blacksmith
//	X-Blacksmith-Event: drift
//	X-Blacksmith-Delivery: <event id>
//	X-Blacksmith-Signature: sha256=<hex HMAC-SHA256(secret, body)>
//
// Metrics, labelled with the webhook's index in Options.Webhooks (never its URL):
//
//	blacksmith_webhook_deliveries_total{webhook,result}  result: delivered, retried, failed, dropped
//	blacksmith_webhook_queue_length{webhook}
//	blacksmith_webhook_delivery_duration_seconds          one observation per attempt
package notify
