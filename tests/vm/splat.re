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
lockdep
blocked for more than
KASAN
UBSAN
detected stall
soft lockup
ODEBUG
list_add corruption
list_del corruption
