// Package vault owns every read and write of the broker's records in
// HashiCorp Vault: the instance index, per-instance metadata and manifests,
// backups, and the secrets the broker keeps for instances and bindings.
//
// # Parts
//
// A Store is one connection to one mount. Its own methods are what the
// broker uses (broker.Store): an instance's index record, secrets,
// history, backups, manifest, allowance and removal, each handed to the
// part that keeps that family of documents; with Close, Stats, KVVersion
// and Mount. The parts are the Store's fields, each what one kind of
// consumer uses: Indexes (the index: Index, IndexFrom, Record, Update,
// UpdateOver, Remove, Reshard), Documents (each instance's metadata,
// manifest and allowance, and Instances), Archive (backups taken, listed
// and read), Restores (a backup put back), Maintenance (Migrate,
// ExportLegacy), History (each instance's events), RunLog (the
// reconciler's runs), State (its state documents), Leases (among daemons)
// and Secrets.
//
// Below them, unexported: kv, the client of the mount (KV v1 or v2, every
// request counted); indexDocs, the index's layout and shards as read; the
// batcher, which writes an update's changes shard by shard (check-and-set,
// re-applied on a conflict); the resharder; the stateReader, what a backup
// holds of an instance; the remover (RemoveAll, DeleteSecretsBackedUp); and
// the renewer of the token.
//
// # Layout
//
// Paths are relative to the KV mount (Options.Mount, default "secret"):
//
//	blacksmith/index/meta                 layout version, shard count, hash, migration facts
//	blacksmith/index/v1/shards/NNN        NNN = shard(id): {instanceID: record, ...}
//	db                                    legacy Blacksmith index (read by Migrate, never written)
//	{id}/manifest                         {"manifest": "<yaml>"}
//	{id}/metadata                         releases, stemcells, vms, properties, history
//	{id}/{backup path}/{unix}[-N]         backups (see Backup, BackupAll)
//	{id}/credentials, {id}/bindings/...   owned by the broker, via Secret/PutSecret
//	blacksmith/leases/{name}              leases among daemons (AcquireLease): the reconciler's,
//	                                      broker-limits, instance-{id} (one per instance operated on)
//	blacksmith/state/{name}, runs/, history/{id}/...   the reconciler's memory, run log, events
//
// The index is split into shards (128 at first, the count recorded in the
// meta document) by the first 4 bytes of SHA-256 of the instance id, so
// 25,000 instances are about 200 entries per document: far below Vault's
// listener limits (10,000 entries per JSON object, 1 MiB per string) that a
// single map cannot stay under. An index that grows past ReshardAbove
// records a shard is re-sharded (Reshard, ShardsFor: a power-of-two
// multiple, at most 4,096 shards), moving records shard by shard. Update groups changes per shard: one read and at most
// one write per touched shard, whatever the number of changes.
//
// # Safety
//
// With KV version 2 every shard write is check-and-set against the version
// that was read; on a conflict the shard is re-read and the changes are
// re-applied, so no update is lost between processes. So are the
// read-modify-writes of an instance's documents (PutManifest, UpdateMetadata,
// and PutMetadata of metadata that Metadata read). With KV version 1
// Vault offers no check-and-set: updates are serialized within the process,
// and two processes writing the same shard at the same moment can lose one
// of the updates (last writer wins). Use KV v2 when several broker VMs share
// an index.
//
// Nothing is ever written from a failed, partial or unparseable read: Index
// returns an error rather than a partial map, and Update aborts before any
// write when a touched shard cannot be read. A 404 counts as "absent" only
// when Vault says so (not for a missing mount or a path of the other KV
// version), and an index whose layout document is gone while shards remain
// is an error, never an empty index. A record that is not a JSON
// object is reported (Index.Problems, errors.Is ErrCorrupt) and kept byte
// for byte; fields this package does not know are kept on every write.
//
// Nothing is deleted without a backup (when backups are on):
// DeleteSecretsBackedUp and RemoveAll take a BackupAll, which holds the
// instance's secrets too, before deleting anything, and a RemoveAll retried
// after a partial failure leaves a newest backup that still holds all it
// deleted. Records, manifests and secrets are bounded in size
// (Options.MaxRecordBytes, MaxManifestBytes, MaxSecretBytes; ErrTooLarge),
// so that no one instance can grow an index shard past Vault's limits.
//
// # A Vault cluster failing over
//
// Every request rides out a failover of a Vault cluster (failover.go):
// the answers of a cluster without an active node right now (a refused or
// cut connection, 429, a balancer's 502 or 503, a sealed node's 503, a
// standby's 500 "local node not active", a Raft follower's "node is not
// the leader", a leader's "leadership lost while committing log") are
// tried again with backoff until Options.FailoverWait (15s) has passed
// since the first of them, one wait per outage shared by every request:
// past it they fail at once until Vault answers again, so that a Vault
// down for good trips the run's breaker as soon as before. A timeout is
// never retried (the request may be under way on a frozen node). A write
// whose first try landed as the active node went away is told apart by
// check-and-set: its retry finds the version moved (ErrConflict, read
// again), and a lease finds its own holder and times (kept).
package vault
