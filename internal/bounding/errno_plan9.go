package bounding

// brokenErrno reports nothing on Plan 9, which has no errno values: its
// broken pipes and connections surface as the io, os and net errors that
// brokenConnection checks already.
func brokenErrno(error) bool { return false }
