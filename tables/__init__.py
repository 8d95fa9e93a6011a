"""Pure domain for the tables: cards, hand evaluation, game variants, pay tables, rounds."""
