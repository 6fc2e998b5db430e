import RVS_PersistentPrefs

print("worker")
