package purramcp_test

import (
	"testing/synctest"
	"time"
)

// serverNotifyDelay is how long a go-sdk server debounces a list change
// before it notifies its sessions (go-sdk v1.8.0 mcp/server.go
// notificationDelay, 10ms), plus a millisecond so the notification's timer
// fires before the waiting test goroutine wakes.
const serverNotifyDelay = 10*time.Millisecond + time.Millisecond

// awaitServerNotify, inside a synctest bubble, lets a go-sdk server's
// debounced list change go out and reach the client: fake time passes the
// debounce, then every goroutine of the bubble settles. The caller then
// asserts the effect directly.
func awaitServerNotify() {
	time.Sleep(serverNotifyDelay)
	synctest.Wait()
}
