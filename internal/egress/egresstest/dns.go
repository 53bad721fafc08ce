// Package egresstest serves fake name resolution for tests of the egress
// rule: named peers resolve to the addresses a test gives them, and no
// DNS query leaves the process.
package egresstest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
)

// Resolver returns a resolver that answers from names (lower case, no
// trailing dot, to IP address literals) over an in-memory connection: no
// DNS query leaves the process. A name it does not hold has no address.
func Resolver(names map[string][]string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go serveDNS(server, names)
		return client, nil
	}}
}

// serveDNS answers DNS queries in TCP framing on c until it fails.
func serveDNS(c net.Conn, names map[string][]string) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
			return
		}
		// The question: labels up to a zero byte, then type and class.
		i, labels := 12, []string{}
		for i < len(q) && q[i] != 0 {
			l := int(q[i])
			if i+1+l > len(q) {
				return
			}
			labels = append(labels, string(q[i+1:i+1+l]))
			i += 1 + l
		}
		if i+5 > len(q) {
			return
		}
		qtype := binary.BigEndian.Uint16(q[i+1:])
		question := q[12 : i+5]
		var answers [][]byte
		for _, s := range names[strings.ToLower(strings.Join(labels, "."))] {
			a := netip.MustParseAddr(s)
			if (qtype == 1 && a.Is4()) || (qtype == 28 && a.Is6()) {
				answers = append(answers, a.AsSlice())
			}
		}
		r := make([]byte, 12, 512)
		copy(r, q[:2])                            // id
		binary.BigEndian.PutUint16(r[2:], 0x8180) // response, recursion desired and available
		binary.BigEndian.PutUint16(r[4:], 1)
		binary.BigEndian.PutUint16(r[6:], uint16(len(answers)))
		r = append(r, question...)
		for _, a := range answers {
			r = append(r, 0xc0, 12) // the question's name
			r = binary.BigEndian.AppendUint16(r, qtype)
			r = binary.BigEndian.AppendUint16(r, 1)
			r = binary.BigEndian.AppendUint32(r, 60)
			r = binary.BigEndian.AppendUint16(r, uint16(len(a)))
			r = append(r, a...)
		}
		if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(r)))); err != nil {
			return
		}
		if _, err := c.Write(r); err != nil {
			return
		}
	}
}
