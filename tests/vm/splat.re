BUG: 
WARNING: 
Call Trace:
Oops
Kernel panic
general protection fault
possible recursive locking
possible circular locking
inconsistent lock state
suspicious RCU usage
INFO: lockdep is turned off
DEBUG_LOCKS_WARN_ON
blocked for more than
KASAN
UBSAN
detected stall
soft lockup
ODEBUG
list_add corruption
list_del corruption
