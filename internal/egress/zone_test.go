package egress

import (
	"net/netip"
	"testing"
)

func TestClassify_Vectors(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want Zone
	}{
		// public
		{"1.1.1.1", ZonePublic},
		{"8.8.8.8", ZonePublic},
		{"100.63.255.255", ZonePublic},
		{"100.128.0.0", ZonePublic},
		{"172.15.255.255", ZonePublic},
		{"172.32.0.0", ZonePublic},
		{"169.253.255.255", ZonePublic},
		{"223.255.255.255", ZonePublic},
		{"2606:4700:4700::1111", ZonePublic},
		{"::ffff:1.1.1.1", ZonePublic},
		{"64:ff9b::101:101", ZonePublic},
		{"2002:101:101::1", ZonePublic},
		// private: RFC 1918, CGNAT, unique-local, site-local
		{"10.0.0.0", ZonePrivate},
		{"10.0.0.5", ZonePrivate},
		{"10.255.255.255", ZonePrivate},
		{"172.16.0.1", ZonePrivate},
		{"172.31.255.255", ZonePrivate},
		{"192.168.1.1", ZonePrivate},
		{"100.64.0.0", ZonePrivate},
		{"100.127.255.255", ZonePrivate},
		{"fc00::1", ZonePrivate},
		{"fd12:3456:789a::1", ZonePrivate},
		{"fec0::1", ZonePrivate},
		{"::ffff:10.0.0.5", ZonePrivate},
		{"::ffff:100.64.0.1", ZonePrivate},
		{"64:ff9b::a00:5", ZonePrivate},
		{"64:ff9b:1::1", ZonePrivate},
		{"2002:a00:5::1", ZonePrivate},
		// link-local
		{"169.254.169.254", ZoneLinkLocal},
		{"169.254.0.1", ZoneLinkLocal},
		{"fe80::1", ZoneLinkLocal},
		{"fe80::1%eth0", ZoneLinkLocal},
		{"febf::1", ZoneLinkLocal},
		{"::ffff:169.254.169.254", ZoneLinkLocal},
		{"64:ff9b::a9fe:a9fe", ZoneLinkLocal},
		{"2002:a9fe:a9fe::1", ZoneLinkLocal},
		// loopback
		{"127.0.0.1", ZoneLoopback},
		{"127.255.255.254", ZoneLoopback},
		{"::1", ZoneLoopback},
		{"::ffff:127.0.0.1", ZoneLoopback},
		{"64:ff9b::7f00:1", ZoneLoopback},
		{"2002:7f00:1::1", ZoneLoopback},
		// refused: unspecified, this network, multicast, broadcast, reserved, IPv4-compatible
		{"0.0.0.0", ZoneRefused},
		{"0.1.2.3", ZoneRefused},
		{"::", ZoneRefused},
		{"::ffff:0.0.0.0", ZoneRefused},
		{"224.0.0.1", ZoneRefused},
		{"239.255.255.250", ZoneRefused},
		{"ff02::1", ZoneRefused},
		{"ff05::2", ZoneRefused},
		{"255.255.255.255", ZoneRefused},
		{"240.0.0.1", ZoneRefused},
		{"::7f00:1", ZoneRefused},
		{"::a00:5", ZoneRefused},
		{"64:ff9b::", ZoneRefused},
	} {
		if got := Classify(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Classify(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	if got := Classify(netip.Addr{}); got != ZoneRefused {
		t.Errorf("Classify(invalid) = %v, want refused", got)
	}
}

func TestAllows_Matrix(t *testing.T) {
	zones := []Zone{ZoneRefused, ZonePublic, ZonePrivate, ZoneLinkLocal, ZoneLoopback}
	// want[server][target]
	want := map[Zone]map[Zone]bool{
		ZoneRefused:   {},
		ZonePublic:    {ZonePublic: true},
		ZonePrivate:   {ZonePublic: true, ZonePrivate: true},
		ZoneLinkLocal: {ZonePublic: true, ZonePrivate: true, ZoneLinkLocal: true},
		ZoneLoopback:  {ZonePublic: true, ZonePrivate: true, ZoneLoopback: true},
	}
	for _, s := range zones {
		for _, tz := range zones {
			if got := Allows(s, tz); got != want[s][tz] {
				t.Errorf("Allows(server %v, target %v) = %v, want %v", s, tz, got, want[s][tz])
			}
		}
	}
}

func TestMeet(t *testing.T) {
	for _, tc := range []struct{ a, b, want Zone }{
		{ZonePublic, ZonePublic, ZonePublic},
		{ZonePublic, ZonePrivate, ZonePublic},
		{ZonePrivate, ZoneLoopback, ZonePrivate},
		{ZoneLinkLocal, ZoneLoopback, ZonePrivate},
		{ZoneLoopback, ZoneLoopback, ZoneLoopback},
		{ZoneRefused, ZoneLoopback, ZoneLoopback},
		{ZonePrivate, ZoneRefused, ZonePrivate},
		{ZoneRefused, ZoneRefused, ZoneRefused},
	} {
		if got := meet(tc.a, tc.b); got != tc.want {
			t.Errorf("meet(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := meet(tc.b, tc.a); got != tc.want {
			t.Errorf("meet(%v, %v) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestZone_String(t *testing.T) {
	for z, want := range map[Zone]string{ZoneRefused: "refused", ZonePublic: "public", ZonePrivate: "private",
		ZoneLinkLocal: "link-local", ZoneLoopback: "loopback", Zone(99): "refused"} {
		if got := z.String(); got != want {
			t.Errorf("Zone(%d).String() = %q, want %q", z, got, want)
		}
	}
}
