package purramcp

import (
	"context"
	"time"
)

// maxStaleRetries bounds DiscoveryOptions.StaleRetries: nine attempts at
// most, each bounded by the limits, so a server that keeps announcing
// changes costs a bounded number of listings.
const maxStaleRetries = 8

// validStaleRetries reports whether n is a valid DiscoveryOptions.StaleRetries.
func validStaleRetries(n int) bool { return n >= 0 && n <= maxStaleRetries }

// attempt is one discovery from the first page to the digest, then
// the approver and the check that no list change arrived meanwhile. It
// reports itself to the Observer. Every mcp_catalog_stale it returns means a
// tool list change arrived after the attempt read the revision, so
// DiscoverTools may start over.
func (d *discovery) attempt(ctx context.Context, n int) (*Catalog, error) {
	start := time.Now()
	d.found, d.pages = map[string]*catalogTool{}, 0
	catalog, err := d.discover(ctx)
	digest := ""
	if catalog != nil {
		digest = catalog.digest
		if err != nil {
			catalog = nil // built, then refused: the caller never gets it
		}
	}
	if d.opts.Observer != nil {
		d.opts.Observer(ctx, Event{Kind: eventDiscover, ServerID: d.serverID, RevisionDigest: digest,
			Code: eventCode(err), Attempt: n, Pages: d.pages, Duration: time.Since(start),
			ProtocolVersion: d.monitor.ProtocolVersion(), Transport: d.monitor.transport(), Start: start})
	}
	return catalog, err
}

// discover runs the attempt's steps. Once the catalog is built it is
// returned even with an error, so that the attempt's event carries its
// digest.
func (d *discovery) discover(ctx context.Context) (*Catalog, error) {
	if err := d.preflight(); err != nil {
		return nil, err
	}
	if err := listPages(ctx, d.session, d.monitor, d.revision, d.limits, &d.pages, d.visit); err != nil {
		return nil, err
	}
	catalog, err := d.catalog(d.serverID)
	if err != nil {
		return nil, err
	}
	if err := d.monitor.Check(d.revision); err != nil { // the final check: a list change meanwhile
		return catalog, err
	}
	if d.opts.Approve == nil {
		return catalog, nil
	}
	return catalog, d.approve(ctx, catalog)
}
