"""The game's language (section 5.1, App. B, App. C): what a question means as a set of numbers
(properties), the sentences of questions and hints (grammar), how people phrase questions
(questions), and the selector prompt with the action read from it (prompts).

The lowest room of the house: it imports nothing else of the project, and env.py, oracle.py,
reference.py and metrics.py build the game on it.
"""
