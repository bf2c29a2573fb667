import DiffEngineCommand

DiffEngineCommand.runAsProgram()
