// Replays corpus files and folders through the JSON parser target without libFuzzer.
import FuzzTargets

replayCorpus(Array(CommandLine.arguments.dropFirst()), through: fuzzJSON)
