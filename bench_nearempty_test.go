package purramcp_test

import "testing"

// benchNearEmpty is the session BenchmarkRunNearEmpty and
// BenchmarkRawCallToolNearEmpty share: the search tool, answering
// nearEmptyServer's result.
var benchNearEmpty benchShared[benchCall]

// BenchmarkRunNearEmpty is BenchmarkRun on a near-empty result (one short
// text block, no hits), where Run's fixed cost weighs most. Compare with
// BenchmarkRawCallToolNearEmpty.
func BenchmarkRunNearEmpty(b *testing.B) {
	benchRun(b, benchCallOn(b, &benchNearEmpty, nearEmptyServer), 0)
}

// BenchmarkRawCallToolNearEmpty is BenchmarkRunNearEmpty's baseline, as
// BenchmarkRawCallTool is BenchmarkRun's.
func BenchmarkRawCallToolNearEmpty(b *testing.B) {
	benchRawCallTool(b, benchCallOn(b, &benchNearEmpty, nearEmptyServer), 0)
}
