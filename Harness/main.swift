import RVS_PersistentPrefs

print("usage: harness")
