package vault

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// IndexMaxVersions is the number of versions KV v2 keeps of each index
// document (the layout and every shard): the current one and two to roll
// back to (vault kv rollback). Left at the mount's default (10), every
// change of a record would keep a copy of its whole shard ten times over.
const IndexMaxVersions = 3

// boundIndexVersions sets max_versions on the layout document and the shards
// of a layout of n shards (KV v2; the documents need not exist yet). It is
// best effort: a token that may not write the index's metadata leaves the
// mount's default, which costs storage, not correctness; the warning says so.
func (d *indexDocs) boundIndexVersions(ctx context.Context, n int) (bounded bool, writes int, err error) {
	if d.kv.version != 2 {
		return true, 0, nil
	}
	paths := []string{metaPath}
	for i := range n {
		paths = append(paths, shardPath(n, i))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallelism)
	for _, p := range paths {
		g.Go(func() error { return d.kv.boundVersions(gctx, p, IndexMaxVersions) })
	}
	err = g.Wait()
	if errors.Is(err, ErrDenied) {
		d.log.Warn("the index's KV versions are left at the mount's default: the token may not write their metadata "+
			"(grant update on the mount's metadata/blacksmith/index/*)", "error", err)
		return false, len(paths), nil
	}
	if err != nil {
		return false, len(paths), fmt.Errorf("bounding the index's versions: %w", err)
	}
	return true, len(paths), nil
}

// boundLayoutVersions bounds the versions of the current layout's documents
// once (recorded in the layout document), as Migrate does at start.
func (d *indexDocs) boundLayoutVersions(ctx context.Context) error {
	if d.kv.version != 2 {
		return nil
	}
	l, version, err := d.readLayoutVersion(ctx)
	if err != nil || l == nil || l.MaxVersions == IndexMaxVersions {
		return err
	}
	n := l.Shards
	if l.Reshard != nil {
		n = l.Reshard.To // the old shards are bounded by the next start after it ends
	}
	bounded, _, err := d.boundIndexVersions(ctx, n)
	if err != nil || !bounded || l.Reshard != nil {
		return err
	}
	l.MaxVersions = IndexMaxVersions
	if err := d.kv.write(ctx, metaPath, l, version); err != nil && !errors.Is(err, ErrConflict) {
		return fmt.Errorf("recording the index's bounded versions: %w", err)
	}
	return nil
}
