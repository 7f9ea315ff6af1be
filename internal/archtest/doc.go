// Package archtest holds the repository's architecture tests: the rules
// that span packages (which package may import which, what the engine may
// not know) and the documentation's promises (every link and every
// documented flag true). It has no code of its own; its tests read the
// repository from two levels up.
package archtest
