package purramcp

import (
	"context"
	"slices"
)

// approve runs DiscoveryOptions.Approve on a deep copy of catalog's
// snapshot. ctx ending first, or while it runs, fails ErrCanceled; a list
// change or the session's end while it runs fails as the monitor reports
// (mcp_catalog_stale lets DiscoverTools start over); otherwise an approver's
// error becomes a fresh mcp_catalog_unapproved that carries nothing of it.
func (d *discovery) approve(ctx context.Context, catalog *Catalog) error {
	if ctx.Err() != nil {
		return ErrCanceled
	}
	verdict := d.opts.Approve(ctx, catalog.Snapshot())
	if ctx.Err() != nil {
		return ErrCanceled
	}
	if err := d.monitor.Check(d.revision); err != nil {
		return err
	}
	if verdict != nil {
		return fail(CodeCatalogUnapproved)
	}
	return nil
}

// PinDigests returns an approver for [DiscoveryOptions.Approve] that accepts
// a snapshot exactly when its RevisionDigest is one of digests, compared as
// exact strings (no case folding, trimming or other normalization). digests
// is copied; with none, it accepts nothing. Its error for any other digest
// is [ErrCatalogUnapproved]; DiscoverTools reports a fresh one either way.
func PinDigests(digests ...string) func(context.Context, Snapshot) error {
	pinned := slices.Clone(digests)
	return func(_ context.Context, snapshot Snapshot) error {
		if slices.Contains(pinned, snapshot.RevisionDigest) {
			return nil
		}
		return fail(CodeCatalogUnapproved)
	}
}
