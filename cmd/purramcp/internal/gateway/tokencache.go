package gateway

import "time"

// maxCachedTokens caps each token cache of a verifier (JWTVerifier's
// verified tokens, IntrospectionVerifier's answers and its refusals).
const maxCachedTokens = 4096

// makeRoom keeps a token cache (JWTVerifier's, IntrospectionVerifier's
// answers and refusals) below maxCachedTokens before an entry is added:
// when m is full it drops the entries expired at now (until gives when each
// expires), then every entry if m is still full.
func makeRoom[V any](m map[[32]byte]V, now time.Time, until func(V) time.Time) {
	if len(m) < maxCachedTokens {
		return
	}
	for k, e := range m {
		if !now.Before(until(e)) {
			delete(m, k)
		}
	}
	if len(m) >= maxCachedTokens {
		clear(m)
	}
}
