// Not MLIR: rev-opt must report where parsing stopped, without a traceback.

)))) !!! }}} this is not a program
