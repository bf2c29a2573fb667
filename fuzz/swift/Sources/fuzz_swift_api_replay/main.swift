// Replays corpus files and folders through the Swift API target without libFuzzer.
import FuzzTargets

replayCorpus(Array(CommandLine.arguments.dropFirst()), through: fuzzSwiftAPI)
