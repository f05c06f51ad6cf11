from memdir.cli.main import main

main()
