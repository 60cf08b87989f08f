// Package textsim compares short texts by the sets of words they use: a
// small, fixed-size sketch of a text's word set (Of) and the Jaccard
// similarity of two sketches (Jaccard). The monitor uses it to notice a
// question asked again.
package textsim
