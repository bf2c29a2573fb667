// Replays corpus files and folders through the JSON Lines reader target without libFuzzer.
import FuzzTargets

replayCorpus(Array(CommandLine.arguments.dropFirst()), through: fuzzJSONLines)
