// Package textsim compares short texts by the sets of words they use: a
// small, fixed-size sketch of a text's word set (Of) and the Jaccard
// similarity of two sketches (Jaccard). The monitor uses it to notice a
// question asked again, decision memory to find one decided before. It
// also holds the normalisation topics are grouped by (TopicKey), which
// clarify stats and decision memory share.
package textsim
