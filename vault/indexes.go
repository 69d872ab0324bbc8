package vault

import (
	"context"
	"log/slog"
)

// Indexes reads and changes the instance index: every record at once
// (Index, IndexFrom), one record (Record), changes grouped per shard
// (Update, UpdateOver), an instance's removal (Remove) and the move to
// more shards (Reshard). A Store has them (Store.Indexes).
type Indexes struct {
	docs    *indexDocs
	batch   *batcher
	reshard *resharder
	archive *Archive // Remove backs the instance up first
	log     *slog.Logger
}

// Reshard moves the index to to shards (see reshard.go), or finishes the
// re-shard in progress whatever to says. A new index (no layout yet) is
// created, then grown: a run about to write many records grows the index
// first, while it is empty or small. It returns once the layout document
// says the new count; on an error, what was moved stays moved and the next
// call goes on.
func (ix *Indexes) Reshard(ctx context.Context, to int) (ReshardReport, error) {
	return ix.reshard.run(ctx, to)
}
