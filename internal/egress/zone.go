package egress

import "net/netip"

// A Zone is how internal an address is. A request may go to an address
// only if its zone is no more internal than the MCP server's own (see
// [Allows]).
type Zone uint8

// The zones, from the public internet inward. ZoneLinkLocal and
// ZoneLoopback are both more internal than ZonePrivate and neither
// includes the other.
const (
	// ZoneRefused holds addresses no request goes to, whatever the
	// server: invalid, unspecified (0.0.0.0/8, ::), multicast, broadcast,
	// 240.0.0.0/4 and the deprecated IPv4-compatible IPv6 form ::/96.
	ZoneRefused Zone = iota
	// ZonePublic is every address not in another zone.
	ZonePublic
	// ZonePrivate is RFC 1918 (10/8, 172.16/12, 192.168/16), CGNAT
	// (100.64/10), IPv6 unique-local (fc00::/7) and the deprecated IPv6
	// site-local fec0::/10.
	ZonePrivate
	// ZoneLinkLocal is 169.254/16 (where clouds serve instance metadata)
	// and fe80::/10.
	ZoneLinkLocal
	// ZoneLoopback is 127/8 and ::1: the user's own machine.
	ZoneLoopback
)

// String returns the zone's name: "refused", "public", "private",
// "link-local" or "loopback".
func (z Zone) String() string {
	switch z {
	case ZonePublic:
		return "public"
	case ZonePrivate:
		return "private"
	case ZoneLinkLocal:
		return "link-local"
	case ZoneLoopback:
		return "loopback"
	}
	return "refused"
}

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	reserved4  = netip.MustParsePrefix("240.0.0.0/4") // 255.255.255.255 included
	siteLocal  = netip.MustParsePrefix("fec0::/10")
	v4Compat   = netip.MustParsePrefix("::/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// Classify returns a's zone. An IPv4-mapped IPv6 address (::ffff:a.b.c.d)
// is the IPv4 address it maps; a NAT64 (64:ff9b::/96, 64:ff9b:1::/48) or
// 6to4 (2002::/16) address is at least as internal as the IPv4 address it
// embeds. An IPv6 zone suffix (%eth0) is ignored.
func Classify(a netip.Addr) Zone {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid(), a.IsUnspecified(), a.IsMulticast():
		return ZoneRefused
	case a.IsLoopback():
		return ZoneLoopback
	case a.IsLinkLocalUnicast():
		return ZoneLinkLocal
	case a.IsPrivate(), cgnat.Contains(a), siteLocal.Contains(a):
		return ZonePrivate
	case a.Is4() && (thisNet.Contains(a) || reserved4.Contains(a)):
		return ZoneRefused
	case v4Compat.Contains(a):
		return ZoneRefused
	case nat64.Contains(a):
		b := a.As16()
		return Classify(netip.AddrFrom4([4]byte(b[12:16])))
	case nat64Local.Contains(a):
		return ZonePrivate // a local NAT64 prefix (RFC 8215): its embedding is the operator's
	case sixToFour.Contains(a):
		b := a.As16()
		return Classify(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return ZonePublic
}

// Allows reports whether a request on behalf of an MCP server in zone
// server may go to an address in zone target: never to ZoneRefused; to
// ZonePublic always; to ZonePrivate from a private, link-local or
// loopback server; to ZoneLinkLocal only from a link-local server; to
// ZoneLoopback only from a loopback server.
func Allows(server, target Zone) bool {
	switch target {
	case ZonePublic:
		return server != ZoneRefused
	case ZonePrivate:
		return server == ZonePrivate || server == ZoneLinkLocal || server == ZoneLoopback
	case ZoneLinkLocal, ZoneLoopback:
		return server == target
	}
	return false
}

// meet is the most internal zone that both a and b allow: the zone of a
// server whose name resolves to addresses in both.
func meet(a, b Zone) Zone {
	switch {
	case a == b:
		return a
	case a == ZoneRefused || b == ZoneRefused:
		if a == ZoneRefused {
			return b
		}
		return a
	case a == ZonePublic || b == ZonePublic:
		return ZonePublic
	}
	return ZonePrivate
}
