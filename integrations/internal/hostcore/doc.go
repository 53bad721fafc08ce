// Package hostcore holds what every agent-framework integration of purramcp
// (purraadk, purraeino, purraanthropic, purraopenai) does the same way, so
// that each rule is written once and each integration only maps it onto its
// framework's types:
//
//   - reading registrations from a [Source] (a *purramcp.Catalog, a fleet,
//     or a fixed list) into a [Set], checked by the integration's [Rules];
//   - the host's options ([Hooks], which are purraanthropic's and
//     purraopenai's Options, and [Options], which are purraadk's and
//     purraeino's);
//   - the ConcurrencySafe gate, with the one scope [Gates] documents;
//   - building each call's [purramcp.ToolContext] and running the
//     registration once, turning Run's outcome into an [Outcome] and a host
//     failure into [purramcp.CodeHostFailure] after [Hooks.OnHostError];
//   - rendering an outcome for a model ([Outcome.JSON], [Outcome.Model],
//     [ErrorJSON]);
//   - strict-schema eligibility ([StrictEligible]) and deep copies of decoded
//     JSON ([CloneValue]).
//
// Nothing here contacts a server or a model: Run does the former, the
// framework the latter.
package hostcore
