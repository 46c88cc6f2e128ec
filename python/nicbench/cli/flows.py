"""(work in progress)"""

COMMANDS: list = []
