# The README's `ward learn` example: reads one file, writes another.
text = open("notes.txt").read()
with open("shout.txt", "w") as out:
    out.write(text.upper())
print("wrote shout.txt")
